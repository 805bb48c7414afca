/** The part of s3rver (an S3-compatible server used by the tests) that the tests call. */
declare module 's3rver' {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string }[];
  }
  export default class S3rver {
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    /** The HTTP server, once `run()` resolved. */
    readonly httpServer?: import('node:http').Server;
  }
}
