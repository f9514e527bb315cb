import { Queue } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { connectRedis, type RedisHandle } from '../../infra/redis';

/**
 * A handle on the test machine's Redis under a prefix of its own (`tally-test-<name>-<random>`), so
 * suites never see each other's keys; resolves once it is connected.
 */
export async function testRedis(name: string): Promise<RedisHandle> {
  const redis = connectRedis('redis://127.0.0.1:6379', `tally-test-${name}-${randomBytes(4).toString('hex')}`);
  await new Promise<void>((resolve) => redis.onUp(resolve));
  return redis;
}

/** A BullMQ Queue on the service's queue prefix for `fn` to inspect, closed with its connection after. */
export async function withQueue<T>(redis: RedisHandle, name: string, fn: (queue: Queue) => Promise<T>): Promise<T> {
  const connection = redis.duplicateForQueue();
  const queue = new Queue(name, { connection, prefix: `${redis.prefix}:bull` });
  try {
    return await fn(queue);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}
