/* examples/ipc-server.c: a Wine-server-style server for <fastlock/ipc.h>.
 *
 *   ipc-server REGION SOCKET SECONDS
 *
 * Creates the region REGION with a mutex "work", a semaphore "jobs" and a
 * manual-reset event "quit", listens on the Unix socket SOCKET, and for
 * SECONDS hands out a job (a unit of "jobs") every 20 ms.  Clients wait
 * and release in the region directly; the socket only tells the server
 * who they are and, when it closes, that one has gone.  Then the server
 * calls fl_ipc_client_died and reports which mutexes the client
 * abandoned.  At the end it sets "quit", waits for the clients to leave
 * and removes the region.  */
#define _GNU_SOURCE /* accept4 */
#include <fastlock/ipc.h>

#include "ipc-common.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 16

struct peer {
  int fd;
  struct hello who;
  int known; /* its hello has arrived */
};

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void check(int rc, const char *what)
{
  if (rc != 0) {
    fprintf(stderr, "ipc-server: %s: %s\n", what, strerror(rc));
    exit(1);
  }
}

/* The socket closed: the client is gone (or must be cut off).  */
static void client_gone(fl_ipc_t *r, const struct peer *p, fl_ipc_obj_t work)
{
  fl_ipc_obj_t lost[8];
  uint32_t n = 0, i;
  char own[32];
  int rc = fl_ipc_client_died(r, p->who.client, lost, 8, &n);

  if (rc == ESRCH) {
    /* Its slot went to a process that joined when the region had no
     * other: what it abandoned was found, but the report is gone.  */
    printf("server: client %d (pid %d) is gone; its slot was already "
           "reused, its report lost\n",
           p->who.number, (int)p->who.pid);
    return;
  }
  check(rc, "fl_ipc_client_died");
  if (n == 0) {
    /* It closed the region before the socket: a clean exit.  */
    printf("server: client %d (pid %d) has left; it held no mutex\n",
           p->who.number, (int)p->who.pid);
    return;
  }
  snprintf(own, sizeof own, "client-%d", p->who.number);
  printf("server: client %d (pid %d) is gone; abandoned:", p->who.number,
         (int)p->who.pid);
  for (i = 0; i < n && i < 8; i++)
    printf(" %s", lost[i].id == work.id ? "\"work\"" : own);
  printf("\n");
}

int main(int argc, char **argv)
{
  struct pollfd pfd[MAX_CLIENTS + 1];
  struct peer peers[MAX_CLIENTS];
  struct sockaddr_un addr;
  fl_ipc_obj_t work, jobs, quit;
  fl_ipc_t *r;
  int lfd, npeers = 0, i, quitting = 0;
  unsigned jobs_given = 0;
  double end, next_job;

  if (argc != 4) {
    fprintf(stderr, "usage: ipc-server REGION SOCKET SECONDS\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  fl_ipc_unlink(argv[1]);
  check(fl_ipc_create(argv[1], 64, 16, &r), "fl_ipc_create");
  check(fl_ipc_mutex_create(r, "work", 0, &work), "mutex");
  check(fl_ipc_sem_create(r, "jobs", 0, 1000, &jobs), "semaphore");
  check(fl_ipc_event_create(r, "quit", 1, 0, &quit), "event");

  lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", argv[2]);
  unlink(argv[2]);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0
      || listen(lfd, 16) != 0) {
    perror("ipc-server: socket");
    return 1;
  }
  printf("server: region %s ready, objects \"work\", \"jobs\", \"quit\"\n",
         argv[1]);

  end = now() + atof(argv[3]);
  next_job = now();
  for (;;) {
    if (!quitting && now() >= end) {
      check(fl_ipc_event_set(r, quit, NULL), "set quit");
      printf("server: %u jobs handed out; \"quit\" set\n", jobs_given);
      quitting = 1;
    }
    if (quitting && npeers == 0)
      break;
    if (!quitting && now() >= next_job) {
      check(fl_ipc_sem_release(r, jobs, 1, NULL), "release job");
      jobs_given++;
      next_job += 0.02;
    }
    pfd[0].fd = lfd;
    pfd[0].events = POLLIN;
    for (i = 0; i < npeers; i++) {
      pfd[i + 1].fd = peers[i].fd;
      pfd[i + 1].events = POLLIN;
    }
    if (poll(pfd, (nfds_t)npeers + 1, 10) <= 0)
      continue;
    for (i = npeers - 1; i >= 0; i--) {
      ssize_t got;
      if (!(pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      got = read(peers[i].fd, &peers[i].who, sizeof peers[i].who);
      if (got == (ssize_t)sizeof peers[i].who && !peers[i].known) {
        peers[i].known = 1;
        printf("server: client %d connected (pid %d)\n", peers[i].who.number,
               (int)peers[i].who.pid);
        continue;
      }
      if (peers[i].known)
        client_gone(r, &peers[i], work);
      close(peers[i].fd);
      peers[i] = peers[--npeers];
    }
    if ((pfd[0].revents & POLLIN) && npeers < MAX_CLIENTS) {
      peers[npeers].fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
      peers[npeers].known = 0;
      if (peers[npeers].fd >= 0)
        npeers++;
    }
  }
  printf("server: every client has left; removing the region\n");
  close(lfd);
  unlink(argv[2]);
  fl_ipc_close(r);
  fl_ipc_unlink(argv[1]);
  return 0;
}
