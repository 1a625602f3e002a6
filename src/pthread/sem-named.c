/* src/pthread/sem-named.c: sem_open, sem_close, sem_unlink.
 *
 * So that every sem_t a program sees is ours, named semaphores are too.
 * A named semaphore is a file /dev/shm/sem.NAME holding one process-shared
 * semaphore, mapped by each process that opens it: the same place glibc
 * uses, so a name means the same thing with and without the drop-in (the
 * object inside does not: a program must not mix the two on one name).
 * A new semaphore is written complete into a temporary file which is then
 * linked to its name, so that no process ever maps a half-made one.
 * Unlike glibc, two sem_open calls of one name in one process map it
 * twice (two addresses for one semaphore; both work).  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread/sem.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm/"
#define PREFIX "sem."

/* The file of a semaphore name: 0, EINVAL or ENAMETOOLONG.  */
static int path_of(const char *name, char *path, size_t size)
{
  while (*name == '/')
    name++;
  if (*name == '\0' || strchr(name, '/') != NULL)
    return EINVAL;
  if (strlen(name) > NAME_MAX - strlen(PREFIX))
    return ENAMETOOLONG;
  snprintf(path, size, "%s%s%s", SHM_DIR, PREFIX, name);
  return 0;
}

static sem_t *map(int fd)
{
  void *p =
      mmap(NULL, sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? SEM_FAILED : p;
}

/* Open a new temporary file in SHM_DIR with mode, less the umask as
 * open(2) applies it (glibc's sem_open creates its file so too; an
 * fchmod would not apply the umask): an fd, with the name in tmp, or -1
 * with errno.  The name is the PID, a per-process count and the clock:
 * one taken (EEXIST) is passed over.  */
static int open_temporary(char *tmp, size_t size, mode_t mode)
{
  static unsigned count;
  unsigned i;

  for (i = 0; i < 100; i++) {
    struct timespec now;
    int fd;

    clock_gettime(CLOCK_MONOTONIC, &now);
    snprintf(tmp, size, "%s%sfastlock-%ld-%u-%lx", SHM_DIR, PREFIX,
             (long)getpid(), __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED),
             (unsigned long)now.tv_nsec);
    fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  return -1;
}

/* Create the semaphore under path: an fd on it, or -1 with errno
 * (EEXIST when the name was taken meanwhile).  */
static int create(const char *path, mode_t mode, unsigned value)
{
  char tmp[sizeof SHM_DIR + NAME_MAX + 1];
  sem_t init;
  int fd = open_temporary(tmp, sizeof tmp, mode), err = 0;

  if (fd < 0)
    return -1;
  fl_pt_sem_setup(&init, 1, value);
  if (write(fd, &init, sizeof init) != (ssize_t)sizeof init
      || link(tmp, path) != 0)
    err = errno;
  unlink(tmp);
  if (err != 0) {
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

FL_PT_API sem_t *sem_open(const char *name, int oflag, ...)
{
  char path[sizeof SHM_DIR + NAME_MAX + 1];
  mode_t mode = 0;
  unsigned value = 0;
  int fd, err = path_of(name, path, sizeof path);
  sem_t *s;

  if (err != 0) {
    errno = err;
    return SEM_FAILED;
  }
  if ((oflag & O_CREAT) != 0) {
    va_list ap;
    va_start(ap, oflag);
    mode = (mode_t)va_arg(ap, int);
    value = va_arg(ap, unsigned);
    va_end(ap);
    if (value > SEM_VALUE_MAX) {
      errno = EINVAL;
      return SEM_FAILED;
    }
  }
  for (;;) {
    if ((oflag & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL)) {
      fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
      if (fd >= 0 || errno != ENOENT || (oflag & O_CREAT) == 0)
        break;
    }
    fd = create(path, mode, value);
    if (fd >= 0 || errno != EEXIST || (oflag & O_EXCL) != 0)
      break;
    /* Someone created it between our open and our link: open theirs.  */
  }
  if (fd < 0)
    return SEM_FAILED;
  s = map(fd);
  err = errno;
  close(fd);
  errno = err;
  return s;
}

FL_PT_API int sem_close(sem_t *s)
{
  if (munmap(s, sizeof *s) != 0) {
    errno = EINVAL;
    return -1;
  }
  return 0;
}

FL_PT_API int sem_unlink(const char *name)
{
  char path[sizeof SHM_DIR + NAME_MAX + 1];
  int err = path_of(name, path, sizeof path);

  if (err != 0) {
    errno = err == EINVAL ? ENOENT : err;
    return -1;
  }
  return unlink(path);
}
