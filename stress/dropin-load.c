/* stress/dropin-load.c: find and open the pthread drop-in (dropin-load.h).  */
#include "config.h"

#include "dropin-load.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DROPIN_SONAME "libfastlock-pthread.so.0"

static struct pthread_fns table;
static const struct pthread_fns *loaded;
static char where[PATH_MAX];
static char failure[PATH_MAX + 256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlopen a candidate: its handle, with where set, or NULL with failure
 * set.  */
static void *try_open(const char *path)
{
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

  if (lib == NULL) {
    snprintf(failure, sizeof failure, "%s", dlerror());
    return NULL;
  }
  snprintf(where, sizeof where, "%s", path);
  return lib;
}

/* .libs/ beside the running program: the build tree's uninstalled copy.  */
static void *open_beside_program(void)
{
  char self[PATH_MAX], path[PATH_MAX + 32];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  char *slash;

  if (n <= 0)
    return NULL;
  self[n] = '\0';
  slash = strrchr(self, '/');
  if (slash == NULL)
    return NULL;
  *slash = '\0';
  snprintf(path, sizeof path, "%s/.libs/" DROPIN_SONAME, self);
  return access(path, R_OK) == 0 ? try_open(path) : NULL;
}

static void *open_library(void)
{
  const char *env = getenv("FASTLOCK_PTHREAD_LIB");
  void *lib;

  if (env != NULL && *env != '\0')
    return try_open(env);
  if ((lib = open_beside_program()) != NULL)
    return lib;
  if (access(FL_LIBDIR "/" DROPIN_SONAME, R_OK) == 0
      && (lib = try_open(FL_LIBDIR "/" DROPIN_SONAME)) != NULL)
    return lib;
  return try_open(DROPIN_SONAME);
}

/* One function of the table; 0 and failure set if it is missing.  */
static int take(void *lib, void *field, const char *name)
{
  void *p = dlsym(lib, name);

  if (p == NULL) {
    snprintf(failure, sizeof failure, "%s: no %s", where, name);
    return 0;
  }
  /* A data pointer into a function pointer: POSIX's dlsym contract.  */
  memcpy(field, &p, sizeof p);
  return 1;
}

static void load(void)
{
  void *lib = open_library();
  struct pthread_fns *d = &table;

  if (lib == NULL)
    return;
  if (take(lib, &d->mutex_init, "pthread_mutex_init")
      && take(lib, &d->mutex_destroy, "pthread_mutex_destroy")
      && take(lib, &d->mutex_lock, "pthread_mutex_lock")
      && take(lib, &d->mutex_unlock, "pthread_mutex_unlock")
      && take(lib, &d->cond_init, "pthread_cond_init")
      && take(lib, &d->cond_wait, "pthread_cond_wait")
      && take(lib, &d->cond_signal, "pthread_cond_signal")
      && take(lib, &d->sem_init, "sem_init")
      && take(lib, &d->sem_wait, "sem_wait")
      && take(lib, &d->sem_post, "sem_post")
      && take(lib, &d->rw_init, "pthread_rwlock_init")
      && take(lib, &d->rw_destroy, "pthread_rwlock_destroy")
      && take(lib, &d->rw_rdlock, "pthread_rwlock_rdlock")
      && take(lib, &d->rw_wrlock, "pthread_rwlock_wrlock")
      && take(lib, &d->rw_unlock, "pthread_rwlock_unlock"))
    loaded = d;
}

const struct pthread_fns *dropin_load(const char **why)
{
  pthread_once(&once, load);
  if (loaded == NULL && why != NULL)
    *why = failure;
  return loaded;
}

const char *dropin_path(void)
{
  return where;
}
