package io.pmix.common.internal.wire;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A budget of bytes shared by the {@link FrameDecoder}s of many connections: each reserves the
 * announced payload of a frame it has begun to accumulate and gives it back once the frame is
 * complete or the connection goes. It bounds the memory that peers can hold in partial frames
 * all together, where the per-frame limit bounds only one. Thread-safe.
 */
public final class FrameBudget {
  /** No limit: reservations always succeed. */
  public static final FrameBudget UNLIMITED = new FrameBudget(Long.MAX_VALUE);

  private final long limit;
  private final AtomicLong reserved = new AtomicLong();

  private FrameBudget(long limit) {
    this.limit = limit;
  }

  /**
   * A budget of {@code limit} bytes.
   *
   * @throws IllegalArgumentException if the limit is not positive
   */
  public static FrameBudget of(long limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit must be positive: " + limit);
    }
    return new FrameBudget(limit);
  }

  /** The limit in bytes. */
  public long limit() {
    return limit;
  }

  /** The bytes reserved now. */
  public long reserved() {
    return reserved.get();
  }

  /** Reserves {@code bytes} if they fit in what is left; false (nothing reserved) otherwise. */
  public boolean tryReserve(long bytes) {
    if (limit == Long.MAX_VALUE) {
      return true;
    }
    while (true) {
      long now = reserved.get();
      if (bytes > limit - now) {
        return false;
      }
      if (reserved.compareAndSet(now, now + bytes)) {
        return true;
      }
    }
  }

  /** Gives back {@code bytes} reserved earlier. */
  public void release(long bytes) {
    if (limit != Long.MAX_VALUE) {
      reserved.addAndGet(-bytes);
    }
  }
}
