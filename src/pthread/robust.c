/* src/pthread/robust.c: robust mutexes on the kernel's robust list.
 *
 * How a dead owner is found.  Every thread glibc creates registers with
 * the kernel (set_robust_list) the head of a list of the robust mutexes
 * it holds: struct robust_list_head { list, futex_offset,
 * list_op_pending } in its thread control block.  When a thread dies,
 * for whatever reason (kill -9 included), the kernel walks that list:
 * for each entry, the futex word at entry + futex_offset that still holds
 * the dead thread's TID gets FUTEX_OWNER_DIED set and its TID cleared,
 * and one waiter is woken.  list_op_pending covers the window in which a
 * thread has taken (or is releasing) the word but not yet linked (or
 * unlinked) the entry.
 *
 * The drop-in puts its robust mutexes on that same list, in glibc's own
 * layout, so that they coexist with any robust mutex glibc still manages
 * in the same thread (the priority-inheritance kinds it is handed): the
 * entry is the mutex's __list.__next field, whose distance to __lock is
 * glibc's futex_offset; on 64-bit ABIs the list is doubly linked through
 * __list.__prev (glibc's __PTHREAD_MUTEX_HAVE_PREV), on 32-bit ones singly
 * linked and searched on removal.  We find the head with get_robust_list,
 * once per thread.  Only the owning thread touches its list (and the
 * kernel, after it died), so no atomics are needed: compiler barriers
 * keep the stores in the order the kernel may observe at any instant.
 *
 * The kernel wakes waiters of a dead owner's word with a shared futex
 * operation, so a robust mutex always sleeps and wakes on shared futexes
 * (glibc does the same).  The owner's identity is its TID in the dead
 * thread's PID namespace: processes in different PID namespaces sharing
 * one robust mutex can confuse owners (a limit of the kernel's ABI).  */
#define _GNU_SOURCE 1
#include "config.h"

#include "pthread/mutex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

static __thread struct robust_list_head *robust_head
    __attribute__((tls_model("initial-exec")));

#define BARRIER() __asm__ __volatile__("" : : : "memory")

void *fl_pt_robust_head(void)
{
  struct robust_list_head *h = robust_head;
  if (h == NULL) {
    size_t len;
    if (syscall(SYS_get_robust_list, 0, &h, &len) != 0
        || len != sizeof(struct robust_list_head)
        || h->futex_offset
               != (long)offsetof(struct fl_pmutex, lock)
                      - (long)offsetof(struct fl_pmutex, next))
      h = NULL;
    robust_head = h;
  }
  return h;
}

static uintptr_t entry(struct fl_pmutex *pm)
{
  return (uintptr_t)&pm->next;
}

void fl_pt_robust_pending(void *head, struct fl_pmutex *pm)
{
  struct robust_list_head *h = head;
  BARRIER();
  h->list_op_pending = pm != NULL ? (struct robust_list *)entry(pm) : NULL;
  BARRIER();
}

#if __SIZEOF_POINTER__ == 8
/* glibc's __pthread_list_t: the link fields as seen from an entry (the
 * address of a __next field, or the head, whose list field plays it). */
struct link {
  uintptr_t prev;
  uintptr_t next;
};

static struct link *link_of(uintptr_t e)
{
  return (struct link *)((e & ~(uintptr_t)1) - offsetof(struct link, next));
}

void fl_pt_robust_link(void *head, struct fl_pmutex *pm)
{
  struct robust_list_head *h = head;
  uintptr_t first = (uintptr_t)h->list.next;

  link_of(first)->prev = entry(pm);
  pm->next = first;
  pm->prev = (uintptr_t)h;
  BARRIER();
  h->list.next = (struct robust_list *)entry(pm);
  BARRIER();
}

void fl_pt_robust_unlink(void *head, struct fl_pmutex *pm)
{
  (void)head;
  link_of(pm->next)->prev = pm->prev;
  link_of(pm->prev)->next = pm->next;
  BARRIER();
  pm->next = 0;
  pm->prev = 0;
}
#else
void fl_pt_robust_link(void *head, struct fl_pmutex *pm)
{
  struct robust_list_head *h = head;

  pm->next = (uintptr_t)h->list.next;
  BARRIER();
  h->list.next = (struct robust_list *)entry(pm);
  BARRIER();
}

void fl_pt_robust_unlink(void *head, struct fl_pmutex *pm)
{
  uintptr_t *at = (uintptr_t *)&((struct robust_list_head *)head)->list.next;

  while ((*at & ~(uintptr_t)1) != entry(pm)) {
    if ((*at & ~(uintptr_t)1) == (uintptr_t)head)
      return; /* not on the list: nothing to undo */
    at = (uintptr_t *)(*at & ~(uintptr_t)1);
  }
  *at = pm->next;
  BARRIER();
  pm->next = 0;
}
#endif
