package org.example.channels

import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.sync.Mutex

/**
 * A channel that keeps the last [capacity] elements sent to it.
 */
public interface BufferedChannel<E> {
    public val capacity: Int

    public suspend fun send(element: E)

    public fun tryReceive(): E?
}

internal class RingChannel<E>(override val capacity: Int) : BufferedChannel<E> {
    private val buffer = ArrayDeque<E>(capacity)
    private val lock = Mutex()

    override suspend fun send(element: E) {
        lock.lock()
        try {
            if (buffer.size == capacity) buffer.removeFirst()
            buffer.addLast(element)
        } finally {
            lock.unlock()
        }
    }

    override fun tryReceive(): E? = buffer.removeFirstOrNull()

    companion object {
        const val DEFAULT_CAPACITY = 64
    }
}

/** Makes a ring channel; [capacity] must be positive. */
public fun <E> ringChannel(capacity: Int = RingChannel.DEFAULT_CAPACITY): BufferedChannel<E> {
    require(capacity > 0) { "capacity must be positive, was $capacity" }
    return RingChannel(capacity)
}

public class ClosedChannelError(message: String?) : CancellationException(message)
