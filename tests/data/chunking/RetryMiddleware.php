<?php

declare(strict_types=1);

namespace Example\Http;

use Psr\Http\Message\RequestInterface;
use Psr\Http\Message\ResponseInterface;

/**
 * Retries a request when the decider says so, waiting between attempts.
 */
class RetryMiddleware
{
    /** @var callable(int, RequestInterface, ?ResponseInterface): bool */
    private $decider;

    /** @var callable(int): int */
    private $delay;

    public function __construct(callable $decider, ?callable $delay = null)
    {
        $this->decider = $decider;
        $this->delay = $delay ?? [self::class, 'exponentialDelay'];
    }

    /**
     * Default delay: 2^(retries - 1) seconds, in milliseconds.
     */
    public static function exponentialDelay(int $retries): int
    {
        return (int) 2 ** ($retries - 1) * 1000;
    }

    public function __invoke(callable $handler): callable
    {
        return function (RequestInterface $request, array $options) use ($handler) {
            $options['retries'] = $options['retries'] ?? 0;
            return $handler($request, $options)->then(
                fn (ResponseInterface $response) => $this->onFulfilled($request, $options, $response, $handler)
            );
        };
    }

    private function onFulfilled(RequestInterface $request, array $options, ResponseInterface $response, callable $handler)
    {
        if (!($this->decider)($options['retries'], $request, $response)) {
            return $response;
        }
        $options['delay'] = ($this->delay)(++$options['retries']);
        return $handler($request, $options);
    }
}

function retry_middleware(callable $decider): callable
{
    return static fn (callable $handler) => new RetryMiddleware($decider);
}
