/* tests/pthread-tsan.c: a pthread program for tests/test-pthread-tsan.sh,
 * compiled there with -fsanitize=thread.  Two threads hand a counter back
 * and forth through a mutex and a condition variable, so that the
 * condition wait really sleeps.  Prints the count and exits 0.  */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 50

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, count;

static void *signaller(void *unused)
{
  int r;

  for (r = 0; r < ROUNDS; r++) {
    usleep(1000);
    pthread_mutex_lock(&m);
    count++;
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
  }
  return unused;
}

int main(void)
{
  pthread_t t;
  int r;

  pthread_create(&t, NULL, signaller, NULL);
  for (r = 0; r < ROUNDS; r++) {
    pthread_mutex_lock(&m);
    while (!ready)
      pthread_cond_wait(&c, &m);
    ready = 0;
    count++;
    pthread_mutex_unlock(&m);
  }
  pthread_join(t, NULL);
  printf("%d\n", count);
  return count == 2 * ROUNDS ? 0 : 1;
}
