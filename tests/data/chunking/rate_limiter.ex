defmodule Example.RateLimiter do
  @moduledoc """
  A token-bucket rate limiter kept in an ETS table, one bucket per key.
  """

  use GenServer

  alias Example.Clock

  @table :rate_limiter_buckets
  @default_rate 10

  @doc "Starts the limiter and creates its table."
  @spec start_link(keyword()) :: GenServer.on_start()
  def start_link(opts \\ []) do
    GenServer.start_link(__MODULE__, opts, name: __MODULE__)
  end

  @doc """
  Takes one token from `key`'s bucket. Returns `:ok`, or `{:error, :rate_limited}`
  when the bucket is empty.
  """
  def take(key, rate \\ @default_rate) do
    now = Clock.now_ms()

    case :ets.lookup(@table, key) do
      [] ->
        :ets.insert(@table, {key, rate - 1, now})
        :ok

      [{^key, tokens, last}] ->
        refilled = min(rate, tokens + div((now - last) * rate, 1000))
        if refilled > 0, do: put(key, refilled - 1, now), else: {:error, :rate_limited}
    end
  end

  defp put(key, tokens, now) do
    :ets.insert(@table, {key, tokens, now})
    :ok
  end

  @impl true
  def init(_opts) do
    :ets.new(@table, [:named_table, :public, read_concurrency: true])
    {:ok, %{}}
  end
end
