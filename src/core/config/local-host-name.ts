/**
 * The name of the built-in host that runs jobs as local processes: the product works with no GPU machine. A module of its
 * own so that code run on worker threads (the metrics parse workers) can name the local host without loading the
 * workspace config's zod schemas.
 */
export const LOCAL_HOST = 'local';
