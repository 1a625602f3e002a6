/* examples/ipc-client.c: a client of examples/ipc-server.c.
 *
 *   ipc-client REGION SOCKET NUMBER
 *
 * Opens the region and its objects, tells the server its client id over
 * the socket, creates and keeps a mutex of its own ("client-NUMBER"),
 * then loops: wait for any of "quit" and "jobs"; for a job, take the
 * mutex "work" and hold it 30 ms.  Killed with SIGKILL (mid-wait or
 * holding "work"), it leaves nothing wedged: the next client to take
 * "work" is told it was abandoned (EOWNERDEAD), and the server, seeing
 * the socket close, reports what it held.  */
#include <fastlock/ipc.h>

#include "ipc-common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void check(int rc, const char *what)
{
  if (rc != 0) {
    fprintf(stderr, "ipc-client: %s: %s\n", what, strerror(rc));
    exit(1);
  }
}

int main(int argc, char **argv)
{
  fl_ipc_obj_t work, wait_for[2], mine;
  struct sockaddr_un addr;
  struct hello who;
  char name[32];
  fl_ipc_t *r;
  int fd, rc, number, done = 0;
  uint32_t index;

  if (argc != 4) {
    fprintf(stderr, "usage: ipc-client REGION SOCKET NUMBER\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  number = atoi(argv[3]);
  check(fl_ipc_open(argv[1], &r), "fl_ipc_open");
  check(fl_ipc_obj_open(r, "work", &work), "open work");
  check(fl_ipc_obj_open(r, "quit", &wait_for[0]), "open quit");
  check(fl_ipc_obj_open(r, "jobs", &wait_for[1]), "open jobs");
  snprintf(name, sizeof name, "client-%d", number);
  check(fl_ipc_mutex_create(r, name, 1, &mine), "create own mutex");

  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", argv[2]);
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    perror("ipc-client: connect");
    return 1;
  }
  who.client = fl_ipc_client_id(r);
  who.pid = (int32_t)getpid();
  who.number = number;
  if (write(fd, &who, sizeof who) != (ssize_t)sizeof who) {
    perror("ipc-client: write");
    return 1;
  }

  for (;;) {
    struct timespec hold = { 0, 30 * 1000000L };
    check(fl_ipc_wait_any(r, 2, wait_for, CLOCK_MONOTONIC, NULL, &index),
          "wait for quit or a job");
    if (index == 0)
      break;
    rc = fl_ipc_wait_any(r, 1, &work, CLOCK_MONOTONIC, NULL, &index);
    if (rc == EOWNERDEAD)
      printf("client %d: took \"work\", abandoned by a dead client: "
             "recovering its state\n",
             number);
    else
      check(rc, "take work");
    nanosleep(&hold, NULL);
    check(fl_ipc_mutex_release(r, work, NULL), "release work");
    done++;
  }
  printf("client %d: \"quit\" is set; %d jobs done\n", number, done);
  check(fl_ipc_mutex_release(r, mine, NULL), "release own mutex");
  fl_ipc_close(r);
  close(fd);
  return 0;
}
