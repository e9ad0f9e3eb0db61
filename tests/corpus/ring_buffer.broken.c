/*
 * ring_buffer.c - a fixed-size byte ring buffer.
 * Braces in comments { do not count ( at all.
 */
#include <stdio.h>
#include <string.h>

#define RB_CAPACITY 64
#define RB_FULL(rb) ((rb)->count == RB_CAPACITY)

typedef struct {
    unsigned char data[RB_CAPACITY];
    size_t head;
    size_t tail;
    size_t count;
} ring_buffer;

static const char *names[] = { "empty {", "full )", "ok ]" };

/* Put one byte; returns 0 when the buffer is full. */
static int
rb_put(ring_buffer *rb, unsigned char byte)
{
    if (RB_FULL(rb)) 
        return 0;
    }
    rb->data[rb->tail] = byte;
    rb->tail = (rb->tail + 1) % RB_CAPACITY;
    rb->count++;
    return 1;
}

// Take one byte into *out.
int rb_get(ring_buffer *rb,
           unsigned char *out)
{
    char quote = '\'';
    char brace = '{';
    if (rb->count == 0) { return 0; }
    *out = rb->data[rb->head];
    rb->head = (rb->head + 1) % RB_CAPACITY;
    rb->count--;
    (void)quote; (void)brace;
    return 1;
}

int main(void)
{
    ring_buffer rb;
    memset(&rb, 0, sizeof rb);
    for (int i = 0; i < 3; i++) {
        rb_put(&rb, (unsigned char)('a' + i));
    }
    printf("state: %s \"%d\"\n", names[rb.count > 2 ? 2 : 0], (int)rb.count);
    return 0;
}
