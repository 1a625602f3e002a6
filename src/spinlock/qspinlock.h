/* src/spinlock/qspinlock.h: the qspinlock's queue nodes, for qspinlock.c
 * and the tests that must reach inside it.
 *
 * Every thread that queues on a qspinlock gets an index in a process-wide
 * registry, and with it FL_QSPIN_NEST queue nodes, one per level of
 * nesting (a signal handler that queues while its thread is queued on
 * another lock takes the next one).  A node is named in the lock word by
 * its code, (index + 1) << 2 | level, 16 bits; the registry turns a code
 * back into the node.  Nodes live in chunks that are mapped once and never
 * unmapped, so a code read from any lock word always names readable
 * memory.  The index goes back to the registry when the thread exits.  */
#ifndef FASTLOCK_SPINLOCK_QSPINLOCK_H
#define FASTLOCK_SPINLOCK_QSPINLOCK_H

#include <stdint.h>

#include <fastlock/spinlock.h>

#define FL_QSPIN_NEST 4
/* The tail's 14-bit thread field holds index + 1, and 0 means no queue. */
#define FL_QSPIN_THREADS 16383

/* A node, one cache line to itself: its waiter spins on state, and the
 * holder that grants it writes state and reads beat from the same line.
 * Every field but beat changes only while somebody holds the lock, or
 * before the node can be found (the waiter's own enqueue and link).
 *
 *   state  FL_QNODE_WAIT while queued behind another node;
 *          FL_QNODE_HEAD when first in the queue: queued into an empty
 *          queue, or made the head by its predecessor, which then held
 *          the lock (the head spins on the lock word);
 *          FL_QNODE_GONE when a holder found its waiter not running and
 *          took it out of the queue: the waiter queues again.
 *          Written with release, read by the waiter with acquire.
 *   next   the code of the node queued behind, 0 until that node's waiter
 *          has linked itself in (release, after it swapped itself into the
 *          tail).
 *   prev   the code of the node queued ahead, 0 for none.  Read only
 *          by a waiter that took the lock from a head that did not, to
 *          find that head and to leave the queue
 *          (src/spinlock/qspinlock.c).
 *   beat   fl_spin_now() when the waiter last showed itself spinning;
 *          written by the waiter, read by holders.  */
struct fl_qnode {
  int32_t state;
  int32_t next;
  int32_t prev;
  int32_t beat;
  char pad[64 - 4 * sizeof(int32_t)];
};

enum { FL_QNODE_WAIT = 0, FL_QNODE_HEAD = 1, FL_QNODE_GONE = 2 };

/* The calling thread's next free node: its code, and *node set; or 0 when
 * it has none (every index taken, or every level in use).  */
int32_t fl_qnode_take(struct fl_qnode **node);

/* Give back the node fl_qnode_take handed out last.  */
void fl_qnode_put(void);

/* The node a code names.  */
struct fl_qnode *fl_qnode_of(int32_t code);

/* Queue node (named code) on l: initialise it as seen now, swap it into
 * the tail and link it behind the old tail (it is the head if there was
 * none).  Returns the word as it was before the swap.  */
uint32_t fl_qnode_enqueue(fl_qspinlock_t *l, struct fl_qnode *node,
                          int32_t code);

#endif /* FASTLOCK_SPINLOCK_QSPINLOCK_H */
