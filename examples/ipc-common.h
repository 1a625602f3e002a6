/* examples/ipc-common.h: what the example server and client agree on.  */
#ifndef FASTLOCK_EXAMPLE_IPC_COMMON_H
#define FASTLOCK_EXAMPLE_IPC_COMMON_H

#include <stdint.h>

/* A client's first and only message on the server's socket: who it is.
 * The server learns of its death when the socket closes.  */
struct hello {
  uint32_t client; /* fl_ipc_client_id */
  int32_t pid;
  int32_t number; /* the client's own number, for messages */
};

#endif
