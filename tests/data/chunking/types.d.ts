/// <reference types="node" />
import type { Readable } from 'stream';

/** How a request body is serialized before it is sent. */
export type Serializer = (body: unknown) => string | Buffer;

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** Milliseconds before the request is aborted; 0 means never. */
  timeout?: number;
}

/**
 * Send one request and resolve with the response body.
 */
export declare function request<T = unknown>(url: string, options?: RequestOptions): Promise<T>;
export declare function request<T = unknown>(options: RequestOptions & { url: string }): Promise<T>;

export declare const VERSION: string;
export declare let defaults: RequestOptions;

declare module 'http-client/adapters' {
  export function fetchAdapter(options: RequestOptions): Promise<Readable>;
  export function xhrAdapter(options: RequestOptions): Promise<Readable>;
}

export declare class HttpError extends Error {
  readonly status: number;
  constructor(message: string, status: number);
}

export {};
