/* src/ipc/objects.c: object slots: names, handles, references.
 *
 * An object is found by name with a scan of the object table (names are
 * for creating and opening, never on a wait's path).  A handle carries the
 * region's identity and the slot's index and generation; it is valid in
 * a process while that process holds a reference (refs[client][index] >
 * 0), so a handle of a foreign region, a stale one (the slot freed and
 * reused: another generation) and one this process closed are all
 * refused with EBADF.  The object's own refs is the sum over clients;
 * when it drops to 0 the slot is freed (type 0) and its generation
 * advanced.  */
#include "config.h"

#include "ipc/ipc-internal.h"

#include <errno.h>
#include <string.h>

/* The name as the 16 words it is stored as; ENAMETOOLONG if too long.  */
static int pack_name(const char *name, uint32_t words[16])
{
  size_t len = strlen(name);

  if (len > FL_IPC_NAME_MAX)
    return ENAMETOOLONG;
  memset(words, 0, 16 * sizeof words[0]);
  memcpy(words, name, len);
  return 0;
}

static uint32_t find_name(fl_ipc_t *r, const uint32_t words[16])
{
  struct fl_ipc_object *o = fl_ipc_objects(r);
  uint32_t i, n = fl_ipc_hdr(r)->nobjects;

  for (i = 0; i < n; i++)
    if (o[i].type != 0 && memcmp(o[i].name, words, 16 * sizeof words[0]) == 0)
      return i;
  return n;
}

fl_ipc_obj_t fl_ipc_handle(const fl_ipc_t *r, uint32_t index)
{
  fl_ipc_obj_t h;

  h.region = fl_ipc_hdr(r)->region;
  h.id = index | (fl_ipc_objects(r)[index].gen & 0xffffu) << 16;
  return h;
}

int fl_ipc_object_get(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t type,
                      uint32_t *index)
{
  const struct fl_ipc_hdr *hdr = fl_ipc_hdr(r);
  uint32_t i = FL_IPC_ID_INDEX(h.id), t;
  const struct fl_ipc_object *o;

  if (h.region != hdr->region || i >= hdr->nobjects)
    return EBADF;
  o = &fl_ipc_objects(r)[i];
  if (o->type == 0 || (o->gen & 0xffffu) != FL_IPC_ID_GEN(h.id)
      || fl_ipc_refs(r, r->client)[i] == 0)
    return EBADF;
  t = o->type == FL_IPC_EVENT_MANUAL ? FL_IPC_EVENT : o->type;
  if (type == 0 ? t == FL_IPC_RWSEM : type != FL_IPC_ANY && t != type)
    return EINVAL;
  *index = i;
  return 0;
}

int fl_ipc_enter_object(fl_ipc_t *r, fl_ipc_obj_t h, uint32_t type,
                        uint32_t *index)
{
  int rc;

  if (r == NULL)
    return EINVAL;
  if ((rc = fl_ipc_enter(r)) != 0)
    return rc;
  if ((rc = fl_ipc_object_get(r, h, type, index)) != 0)
    fl_ipc_unlock(r);
  return rc;
}

void fl_ipc_ref(fl_ipc_t *r, uint32_t client, uint32_t index)
{
  struct fl_ipc_object *o = &fl_ipc_objects(r)[index];
  uint32_t *mine = &fl_ipc_refs(r, client)[index];

  fl_ipc_set(r, mine, *mine + 1);
  fl_ipc_set(r, &o->refs, o->refs + 1);
}

void fl_ipc_unref(fl_ipc_t *r, uint32_t client, uint32_t index, uint32_t n)
{
  struct fl_ipc_object *o = &fl_ipc_objects(r)[index];
  uint32_t *mine = &fl_ipc_refs(r, client)[index];

  fl_ipc_set(r, mine, *mine - n);
  fl_ipc_set(r, &o->refs, o->refs - n);
  if (o->refs == 0) {
    fl_ipc_set(r, &o->type, 0);
    fl_ipc_set(r, &o->gen, (o->gen + 1) & 0xffffu);
    fl_ipc_set(r, &o->a, 0);
    fl_ipc_set(r, &o->b, 0);
    fl_ipc_set(r, &o->c, 0);
    fl_ipc_set(r, &o->d, 0);
  }
}

void fl_ipc_drop_refs(fl_ipc_t *r, uint32_t client)
{
  uint32_t i, n = fl_ipc_hdr(r)->nobjects;
  const uint32_t *refs = fl_ipc_refs(r, client);

  for (i = 0; i < n; i++)
    if (refs[i] != 0) {
      fl_ipc_unref(r, client, i, refs[i]);
      /* Consistent again: one object's references are gone.  */
      fl_ipc_checkpoint(r);
    }
}

int fl_ipc_object_create(fl_ipc_t *r, const char *name, uint32_t type,
                         const uint32_t v[4], fl_ipc_obj_t *out)
{
  struct fl_ipc_object *o;
  uint32_t words[16], i, k, n;
  int rc;

  if (r == NULL || out == NULL)
    return EINVAL;
  rc = pack_name(name != NULL ? name : "", words);
  if (rc != 0)
    return rc;
  rc = fl_ipc_enter(r);
  if (rc != 0)
    return rc;
  n = fl_ipc_hdr(r)->nobjects;
  o = fl_ipc_objects(r);
  if (words[0] != 0 && find_name(r, words) != n) {
    rc = EEXIST;
    goto out;
  }
  for (i = 0; i < n && o[i].type != 0; i++)
    continue;
  if (i == n) {
    rc = ENOSPC;
    goto out;
  }
  /* The lock is written directly: nobody can reach it before the type,
   * written (undoably) below, makes the slot an object.  */
  if (type == FL_IPC_RWSEM)
    fl_rwsem_init(&o[i].rwsem, FL_PSHARED | FL_ROBUST);
  for (k = 0; k < 16; k++)
    fl_ipc_set(r, &o[i].name[k], words[k]);
  fl_ipc_set(r, &o[i].a, v[0]);
  fl_ipc_set(r, &o[i].b, v[1]);
  fl_ipc_set(r, &o[i].c, v[2]);
  fl_ipc_set(r, &o[i].d, v[3]);
  fl_ipc_set(r, &o[i].type, type);
  fl_ipc_ref(r, r->client, i);
  *out = fl_ipc_handle(r, i);
out:
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_obj_open(fl_ipc_t *r, const char *name, fl_ipc_obj_t *out)
{
  uint32_t words[16], i;
  int rc;

  if (r == NULL || name == NULL || name[0] == '\0' || out == NULL)
    return EINVAL;
  rc = pack_name(name, words);
  if (rc != 0 || (rc = fl_ipc_enter(r)) != 0)
    return rc;
  i = find_name(r, words);
  if (i == fl_ipc_hdr(r)->nobjects) {
    rc = ENOENT;
  } else {
    fl_ipc_ref(r, r->client, i);
    *out = fl_ipc_handle(r, i);
  }
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_obj_dup(fl_ipc_t *r, fl_ipc_obj_t obj)
{
  uint32_t i;
  int rc;

  if ((rc = fl_ipc_enter_object(r, obj, FL_IPC_ANY, &i)) != 0)
    return rc;
  fl_ipc_ref(r, r->client, i);
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_obj_close(fl_ipc_t *r, fl_ipc_obj_t obj)
{
  uint32_t i;
  int rc;

  if ((rc = fl_ipc_enter_object(r, obj, FL_IPC_ANY, &i)) != 0)
    return rc;
  fl_ipc_unref(r, r->client, i, 1);
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_obj_type(fl_ipc_t *r, fl_ipc_obj_t obj, int *type)
{
  uint32_t i;
  int rc;

  if (r == NULL || type == NULL)
    return EINVAL;
  if ((rc = fl_ipc_enter(r)) != 0)
    return rc;
  rc = fl_ipc_object_get(r, obj, FL_IPC_ANY, &i);
  if (rc == 0)
    *type = (int)fl_ipc_objects(r)[i].type;
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_rwsem(fl_ipc_t *r, fl_ipc_obj_t rwsem, fl_rwsem_t **out)
{
  uint32_t i;
  int rc;

  if (r == NULL || out == NULL)
    return EINVAL;
  if ((rc = fl_ipc_enter(r)) != 0)
    return rc;
  rc = fl_ipc_object_get(r, rwsem, FL_IPC_RWSEM, &i);
  if (rc == 0)
    *out = &fl_ipc_objects(r)[i].rwsem;
  fl_ipc_unlock(r);
  return rc;
}

int fl_ipc_rwsem_create(fl_ipc_t *r, const char *name, fl_ipc_obj_t *out)
{
  const uint32_t v[4] = { 0, 0, 0, 0 };

  return fl_ipc_object_create(r, name, FL_IPC_RWSEM, v, out);
}
