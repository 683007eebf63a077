import type { QueryKey, QueryFilters } from './types'
import { notifyManager } from './notifyManager'
import { noop } from './utils'

// TYPES

export type Updater<TInput, TOutput> =
  | TOutput
  | ((input: TInput) => TOutput)

export type QueryStatus = 'pending' | 'error' | 'success'

/** Options that every query created by this client starts from. */
export interface DefaultOptions<TError = Error> {
  queries?: Partial<QueryOptions<unknown, TError>>
  mutations?: MutationOptions<unknown, TError>
  /** Called for every error; return true to rethrow. */
  onError?: (error: TError) => boolean
}

export enum FetchDirection {
  Forward = 'forward',
  Backward = 'backward',
}

const enum Flags { None = 0, Stale = 1 << 0 }

/**
 * Compare two query keys structurally.
 */
export function matchKey(a: QueryKey, b: QueryKey): boolean
export function matchKey(a: string, b: string): boolean
export function matchKey(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * The client owns the query cache and the default options applied to every query.
 */
export class QueryClient<TContext extends object = {}> {
  #queryCache: QueryCache
  #defaultOptions: DefaultOptions
  #mountCount = 0
  #unsubscribeFocus?: () => void

  constructor(config: QueryClientConfig = {}) {
    this.#queryCache = config.queryCache || new QueryCache()
    this.#defaultOptions = config.defaultOptions || {}
  }

  /**
   * Return the cached data of a query, or undefined when it has none.
   * The query key is hashed with the client's default hash function, so two keys
   * that differ only in the order of object properties find the same query.
   */
  getQueryData<TData = unknown>(queryKey: QueryKey, filters: QueryFilters = {}): TData | undefined {
    const options = this.defaultQueryOptions({ queryKey })
    return this.#queryCache.get<TData>(options.queryHash)?.state.data
  }

  /**
   * Write data into the cache synchronously, creating the query if needed.
   * The query key is hashed with the client's default hash function, so two keys
   * that differ only in the order of object properties find the same query.
   */
  setQueryData<TData = unknown>(queryKey: QueryKey, filters: QueryFilters = {}): TData | undefined {
    const query = this.#queryCache.build(this, this.defaultQueryOptions({ queryKey }))
    return query.setData(updater, { manual: true })
  }

  /**
   * Remove every query that matches the filters from the cache.
   * The query key is hashed with the client's default hash function, so two keys
   * that differ only in the order of object properties find the same query.
   */
  removeQueries<TData = unknown>(queryKey: QueryKey, filters: QueryFilters = {}): TData | undefined {
    const queryCache = this.#queryCache
    notifyManager.batch(() => {
      queryCache.findAll(filters).forEach((query) => {
        queryCache.remove(query)
      })
    })
  }

  /**
   * Cancel the outgoing fetches of every matching query.
   * The query key is hashed with the client's default hash function, so two keys
   * that differ only in the order of object properties find the same query.
   */
  cancelQueries<TData = unknown>(queryKey: QueryKey, filters: QueryFilters = {}): TData | undefined {
    const defaultedCancelOptions = { revert: true, ...cancelOptions }
    const promises = notifyManager.batch(() =>
      this.#queryCache.findAll(filters).map((query) => query.cancel(defaultedCancelOptions)),
    )
    return Promise.all(promises).then(noop).catch(noop)
  }

  private readonly onFocus = async (): Promise<void> => {
    await this.resumePausedMutations()
  }

  get isMounted(): boolean {
    return this.#mountCount > 0
  }
}

export const hashKey = (queryKey: QueryKey): string =>
  JSON.stringify(queryKey, (_, val) =>
    isPlainObject(val) ? Object.keys(val).sort().reduce((result, key) => {
      result[key] = val[key]
      return result
    }, {} as any) : val,
  )
