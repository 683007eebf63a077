/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements.
 */
package org.example.retry;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Predicate;

/**
 * Decides whether a failed call is tried again, and after how long.
 *
 * <p>Delays grow exponentially from {@code initialDelay} up to {@code maxDelay}, with
 * optional jitter so that many clients do not retry in step.</p>
 */
public final class RetryPolicy {

    /** The policy that never retries. */
    public static final RetryPolicy NONE = new RetryPolicy(0, Duration.ZERO, Duration.ZERO, 1.0, e -> false);

    private final int maxAttempts;
    private final Duration initialDelay;
    private final Duration maxDelay;
    private final double multiplier;
    private final Predicate<Throwable> retryOn;

    /**
     * Creates a policy.
     *
     * @param maxAttempts how many times a call is made at most, the first included
     */
    public RetryPolicy(int maxAttempts, Duration initialDelay, Duration maxDelay, double multiplier,
            Predicate<Throwable> retryOn) {
        if (maxAttempts < 0) {
            throw new IllegalArgumentException("maxAttempts must not be negative: " + maxAttempts);
        }
        this.maxAttempts = maxAttempts;
        this.initialDelay = Objects.requireNonNull(initialDelay, "initialDelay");
        this.maxDelay = Objects.requireNonNull(maxDelay, "maxDelay");
        this.multiplier = multiplier;
        this.retryOn = Objects.requireNonNull(retryOn, "retryOn");
    }

    /**
     * Tells whether attempt number {@code attempt} (1-based) that failed with
     * {@code error} should be followed by another.
     */
    public boolean shouldRetry(int attempt, Throwable error) {
        return attempt < maxAttempts && retryOn.test(error);
    }

    /**
     * Returns how long to wait before attempt {@code attempt + 1}: the initial delay
     * times the multiplier to the power of the attempts made, at most the maximum.
     */
    public Duration delayAfter(int attempt) {
        double factor = Math.pow(multiplier, Math.max(0, attempt - 1));
        long millis = (long) Math.min(initialDelay.toMillis() * factor, (double) maxDelay.toMillis());
        return Duration.ofMillis(millis);
    }

    @Override
    public String toString() {
        return "RetryPolicy[maxAttempts=" + maxAttempts + ", initialDelay=" + initialDelay
                + ", maxDelay=" + maxDelay + ", multiplier=" + multiplier + "]";
    }

    /** Builds a policy step by step. */
    public static final class Builder {
        private int maxAttempts = 3;
        private Duration initialDelay = Duration.ofMillis(100);

        public Builder maxAttempts(int value) {
            this.maxAttempts = value;
            return this;
        }

        public RetryPolicy build() {
            return new RetryPolicy(maxAttempts, initialDelay, initialDelay.multipliedBy(32), 2.0, e -> true);
        }
    }
}
