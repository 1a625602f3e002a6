/* src/ipc/region.c: regions: their size and format, and a process's
 * creating, opening, attaching and leaving one.  */
#include "config.h"

#include "ipc/ipc-internal.h"
#include "sys/clock.h"

#include <fastlock/arch/atomic.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The offsets of the parts (ipc-internal.h), each 64-byte aligned.  */
struct layout {
  uint64_t log, clients, objects, waits, refs, size;
};

static uint64_t align64(uint64_t v)
{
  return (v + 63) & ~(uint64_t)63;
}

static int layout(uint32_t nobjects, uint32_t nclients, struct layout *l)
{
  uint64_t nwaits = (uint64_t)nclients * FL_IPC_WAITS_PER_CLIENT;

  if (nobjects == 0 || nobjects > FL_IPC_OBJECTS_MAX || nclients == 0
      || nclients > FL_IPC_CLIENTS_MAX)
    return EINVAL;
  l->log = align64(sizeof(struct fl_ipc_hdr));
  l->clients = align64(l->log + FL_IPC_LOG_MAX * sizeof(struct fl_ipc_undo));
  l->objects = align64(l->clients + nclients * sizeof(struct fl_ipc_client));
  l->waits = align64(l->objects + nobjects * sizeof(struct fl_ipc_object));
  l->refs = align64(l->waits + nwaits * sizeof(struct fl_ipc_wait));
  l->size = align64(l->refs + (uint64_t)nclients * nobjects * 4);
  return 0;
}

int fl_ipc_region_size(uint32_t nobjects, uint32_t nclients, size_t *size)
{
  struct layout l;
  int rc = layout(nobjects, nclients, &l);

  if (rc == 0 && (l.size > UINT32_MAX || l.size > SIZE_MAX))
    rc = EINVAL;
  if (rc == 0)
    *size = (size_t)l.size;
  return rc;
}

int fl_ipc_format(void *mem, size_t size, uint32_t nobjects, uint32_t nclients)
{
  struct fl_ipc_hdr *h = mem;
  struct layout l;
  size_t need;
  int rc = fl_ipc_region_size(nobjects, nclients, &need);

  if (rc != 0)
    return rc;
  if (mem == NULL || (uintptr_t)mem % 4 != 0)
    return EINVAL;
  if (size < need)
    return ENOSPC;
  layout(nobjects, nclients, &l);
  memset(mem, 0, need);
  h->version = FL_IPC_VERSION;
  h->size = (uint32_t)need;
  /* The identity only has to differ between regions a process might
   * confuse: the time, the process and the address mix well enough.  */
  h->region = (uint32_t)(fl_clock_ns(CLOCK_REALTIME) * 2654435761u)
              ^ (uint32_t)getpid() ^ (uint32_t)(uintptr_t)mem;
  h->nobjects = nobjects;
  h->nclients = nclients;
  h->nwaits = nclients * FL_IPC_WAITS_PER_CLIENT;
  h->log_off = (uint32_t)l.log;
  h->clients_off = (uint32_t)l.clients;
  h->objects_off = (uint32_t)l.objects;
  h->waits_off = (uint32_t)l.waits;
  h->refs_off = (uint32_t)l.refs;
  /* Release: whoever reads the magic reads a formatted region.  */
  fl_store_release((int32_t *)&h->magic, (int32_t)FL_IPC_MAGIC);
  return 0;
}

/* Is the header at base (size bytes mapped) one this library can use? */
static int check_header(const unsigned char *base, size_t size)
{
  const struct fl_ipc_hdr *h = (const void *)base;
  struct layout l;
  uint32_t magic;

  if (size < sizeof *h)
    return EBADMSG;
  magic = (uint32_t)fl_load_acquire((int32_t *)&h->magic);
  if (magic == 0 && h->version == 0)
    return EAGAIN;
  if (magic != FL_IPC_MAGIC)
    return EBADMSG;
  if (h->version != FL_IPC_VERSION)
    return EPROTO;
  if (layout(h->nobjects, h->nclients, &l) != 0 || h->size != l.size
      || h->size > size || h->log_off != l.log || h->clients_off != l.clients
      || h->objects_off != l.objects || h->waits_off != l.waits
      || h->refs_off != l.refs
      || h->nwaits != h->nclients * FL_IPC_WAITS_PER_CLIENT)
    return EBADMSG;
  return 0;
}

/* Where client slot index comes in the order claim_client tries the
 * slots (lowest first), with the index in the low 12 bits
 * (FL_IPC_CLIENTS_MAX is 4096): FREE slots; then slots whose report
 * fl_ipc_client_died has read; then DEAD and KILLED slots, oldest death
 * first, whose report claiming loses (the server's call gets ESRCH);
 * last LIVE ones, whose process holds its byte lock unless it died
 * unnoticed (its report is not made yet).  Read without the region lock,
 * which a process may take only once it has a slot, and relaxed: a hint,
 * since the byte lock alone makes a slot ours and the region lock then
 * orders all we do with it; a state that changes meanwhile costs at most
 * a report that a better choice would have kept.  */
static uint64_t claim_order(const fl_ipc_t *r, uint32_t index)
{
  const struct fl_ipc_client *c = &fl_ipc_clients(r)[index];
  uint32_t now = (uint32_t)fl_load_relaxed((int32_t *)&fl_ipc_hdr(r)->ticket);
  uint64_t key;

  switch ((uint32_t)fl_load_relaxed((const int32_t *)&c->state)) {
    case FL_IPC_CLIENT_FREE:
      key = 0;
      break;
    case FL_IPC_CLIENT_REPORTED:
      key = 1;
      break;
    case FL_IPC_CLIENT_LIVE:
      key = (uint64_t)3 << 32;
      break;
    default: /* the older (now - died the larger), the sooner */
      key = (uint64_t)2 << 32
            | ~(now - (uint32_t)fl_load_relaxed((const int32_t *)&c->died));
  }
  return key << 12 | index;
}

static int by_value(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

  return (x > y) - (x < y);
}

/* Take the byte lock of a slot, in claim_order: the slot's index, or
 * EUSERS if every slot's process lives, or ENOMEM.  */
static int claim_byte(fl_ipc_t *r, uint32_t *index)
{
  uint32_t i, n = fl_ipc_hdr(r)->nclients;
  uint64_t *order = malloc(n * sizeof *order);
  int rc = EUSERS;

  if (order == NULL)
    return ENOMEM;
  for (i = 0; i < n; i++)
    order[i] = claim_order(r, i);
  qsort(order, n, sizeof *order, by_value);
  for (i = 0; i < n && rc != 0; i++) {
    *index = (uint32_t)(order[i] & 0xfffu);
    if (fl_ipc_liveness_claim(r, *index) == 0)
      rc = 0;
  }
  free(order);
  return rc;
}

/* Claim a client slot (ipc-internal.h): first its byte lock, which no
 * living process holds then, so the slot is ours alone; then, under the
 * region lock, whatever a dead or cut-off former owner left is cleaned
 * up and the slot becomes LIVE with a new generation.  */
static int claim_client(fl_ipc_t *r)
{
  struct fl_ipc_hdr *h = fl_ipc_hdr(r);
  struct fl_ipc_wait *w = fl_ipc_waits(r);
  struct fl_ipc_client *c;
  uint32_t i, k, gen;
  int rc = claim_byte(r, &i);

  if (rc != 0)
    return rc;
  c = &fl_ipc_clients(r)[i];
  r->client = i;
  gen = (c->gen + 1) & 0x7fffu;
  if (gen == 0)
    gen = 1;
  r->tag = (i + 1) | gen << 16;
  fl_ipc_lock(r);
  if (c->state == FL_IPC_CLIENT_LIVE)
    fl_ipc_cleanup(r, i, FL_IPC_CLIENT_DEAD);
  for (k = 0; k < h->nwaits; k++)
    if (w[k].state == FL_IPC_WAIT_CANCELLED
        && FL_IPC_TAG_INDEX(w[k].client) == i)
      fl_ipc_set(r, &w[k].state, FL_IPC_WAIT_FREE);
  fl_ipc_set(r, &c->gen, gen);
  fl_ipc_set(r, &c->pid, (uint32_t)getpid());
  fl_ipc_set(r, &c->nabandoned, 0);
  fl_ipc_set(r, &c->closing, 0);
  fl_ipc_set(r, &c->state, FL_IPC_CLIENT_LIVE);
  fl_ipc_unlock(r);
  return 0;
}

/* Make r a view of the region at base through our own descriptor fd.  */
static int join(fl_ipc_t **out, unsigned char *base, size_t size,
                size_t map_size, int fd)
{
  fl_ipc_t *r;
  int rc = check_header(base, size);

  if (rc != 0)
    return rc;
  r = calloc(1, sizeof *r);
  if (r == NULL)
    return ENOMEM;
  r->base = base;
  r->map_size = map_size;
  r->fd = fd;
  fl_ipc_annotate(r);
  /* Listed for the fork handler before the claim (a child must not keep
   * our byte lock's file open); for the thread-exit hook once r->client
   * and r->tag are ours to lock with.  */
  rc = fl_ipc_register(r, FL_IPC_LISTED_FORK);
  if (rc == 0) {
    rc = claim_client(r);
    fl_ipc_register(r, rc == 0 ? FL_IPC_LISTED_ALL : FL_IPC_UNLISTED);
  }
  if (rc != 0) {
    free(r);
    return rc;
  }
  *out = r;
  return 0;
}

static int map_and_join(int fd, size_t size, fl_ipc_t **out)
{
  void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int rc;

  if (base == MAP_FAILED)
    return errno;
  rc = join(out, base, size, size, fd);
  if (rc != 0)
    munmap(base, size);
  return rc;
}

int fl_ipc_create(const char *name, uint32_t nobjects, uint32_t nclients,
                  fl_ipc_t **out)
{
  size_t size;
  void *base;
  int fd, rc = fl_ipc_region_size(nobjects, nclients, &size);

  if (rc != 0 || name == NULL || out == NULL)
    return rc != 0 ? rc : EINVAL;
  fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return errno;
  if (ftruncate(fd, (off_t)size) != 0) {
    rc = errno;
    goto fail;
  }
  base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    rc = errno;
    goto fail;
  }
  rc = fl_ipc_format(base, size, nobjects, nclients);
  if (rc == 0)
    rc = join(out, base, size, size, fd);
  if (rc == 0)
    return 0;
  munmap(base, size);
fail:
  close(fd);
  shm_unlink(name);
  return rc;
}

int fl_ipc_open(const char *name, fl_ipc_t **out)
{
  struct stat st;
  int fd, rc;

  if (name == NULL || out == NULL)
    return EINVAL;
  fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
  if (fd < 0)
    return errno;
  if (fstat(fd, &st) != 0)
    rc = errno;
  else if ((size_t)st.st_size < sizeof(struct fl_ipc_hdr))
    rc = EAGAIN; /* created, not yet sized */
  else
    rc = map_and_join(fd, (size_t)st.st_size, out);
  if (rc != 0)
    close(fd);
  return rc;
}

int fl_ipc_attach(void *mem, size_t size, int fd, fl_ipc_t **out)
{
  char path[64];
  int own, rc;

  if (mem == NULL || out == NULL || (uintptr_t)mem % 4 != 0)
    return EINVAL;
  if (fd < 0 || fcntl(fd, F_GETFD) < 0)
    return EBADF;
  /* Our own open file description: the byte lock must be ours alone
   * (liveness.c), not shared with whoever else holds fd.  */
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  own = open(path, O_RDWR | O_CLOEXEC);
  if (own < 0)
    return errno;
  rc = join(out, mem, size, 0, own);
  if (rc != 0)
    close(own);
  return rc;
}

int fl_ipc_close(fl_ipc_t *r)
{
  if (r == NULL)
    return EINVAL;
  if (fl_ipc_enter(r) == 0) {
    fl_ipc_cleanup(r, r->client, FL_IPC_CLIENT_FREE);
    fl_ipc_unlock(r);
  }
  /* Out of the registry before the descriptor closes: a thread-exit hook
   * that still uses r (holding the registry's lock) finishes first, and
   * the fork handler never closes a descriptor number reused since (a
   * child forked meanwhile keeps a copy of the descriptor, whose byte
   * lock the release drops all the same: the lock is the description's). */
  fl_ipc_register(r, FL_IPC_UNLISTED);
  if (r->fd >= 0) {
    fl_ipc_liveness_release(r);
    close(r->fd);
  }
  if (r->map_size != 0)
    munmap(r->base, r->map_size);
  free(r);
  return 0;
}

int fl_ipc_unlink(const char *name)
{
  if (name == NULL)
    return EINVAL;
  return shm_unlink(name) == 0 ? 0 : errno;
}
