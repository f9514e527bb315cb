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
