/* tests/race-seeded.c: a real data race, on purpose.
 *
 * Two threads increment one plain int with no synchronisation.  The
 * check-helgrind, check-drd and check-tsan targets run this and require
 * the tool to report it: the proof that each target can fail, so that
 * its silence on the real tests means something.  It is not part of
 * 'make check' (natively it just exits 0).  */
#include <pthread.h>
#include <stdio.h>

static int shared_counter;

static void *bump(void *unused)
{
  int i;
  (void)unused;
  for (i = 0; i < 1000; i++)
    shared_counter++;
  return NULL;
}

int main(void)
{
  pthread_t a, b;

  pthread_create(&a, NULL, bump, NULL);
  pthread_create(&b, NULL, bump, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("counter %d (2000 without the race)\n", shared_counter);
  return 0;
}
