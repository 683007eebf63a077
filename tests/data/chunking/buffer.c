/*
 * buffer.c: a growable byte buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define MIN_CAPACITY 64

struct buffer {
  char *data;
  size_t len;
  size_t cap;
};

/* Grow the buffer so that it holds at least `need` bytes. Returns 0 on success. */
static int grow(struct buffer *b, size_t need)
{
  size_t cap = b->cap ? b->cap : MIN_CAPACITY;
  while(cap < need)
    cap *= 2;
  char *data = realloc(b->data, cap);
  if(!data)
    return -1;
  b->data = data;
  b->cap = cap;
  return 0;
}

struct buffer *buffer_new(void)
{
  return calloc(1, sizeof(struct buffer));
}

int buffer_append(struct buffer *b, const char *src, size_t n)
{
  if(b->len + n > b->cap && grow(b, b->len + n))
    return -1;
  memcpy(b->data + b->len, src, n);
  b->len += n;
  return 0;
}

#ifdef BUFFER_DEBUG
void buffer_dump(const struct buffer *b)
{
  fwrite(b->data, 1, b->len, stderr);
}
#endif

void buffer_free(struct buffer *b)
{
  if(b) {
    free(b->data);
    free(b);
  }
}
