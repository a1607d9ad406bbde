/**
 * The `@nestjs/microservices` internals `nestjs-rpc-params.patch.ts` relies on, checked against the installed
 * version: `@Payload()` and `@Ctx()` write a handler's parameters under the key the consumer explorer reads,
 * and the deep import `factories/rpc-params-factory` still loads and resolves what they wrote from the
 * handler's arguments (the payload, one of its fields, the context). If an upgrade of Nest changes either, a
 * test here fails: revisit the patch before upgrading.
 */
import { Ctx, Payload } from '@nestjs/microservices';
import { RPC_ARGS_METADATA, rpcParamsFactory } from './nestjs-rpc-params.patch';

type ParamMetadata = Record<string, { index: number; data?: string }>;

class Handler {
  handle(@Payload() _payload: unknown, @Ctx() _context: unknown, @Payload('id') _id: string): void {}
}

/** The parameter type Nest recorded for the parameter at `index` (the number before the colon of its key). */
function paramType(metadata: ParamMetadata, index: number): number {
  const key = Object.keys(metadata).find((candidate) => metadata[candidate].index === index);
  if (!key) throw new Error(`@nestjs/microservices wrote nothing for parameter ${index}`);
  return Number(key.split(':')[0]);
}

describe('@nestjs/microservices internals the RPC params patch relies on', () => {
  const payload = { id: 'order-1', total: 12 };
  const context = { attempt: 1 };
  const metadata = () =>
    Reflect.getMetadata(RPC_ARGS_METADATA, Handler, 'handle') as ParamMetadata | undefined;

  it('has @Payload() and @Ctx() write their parameters under RPC_ARGS_METADATA', () => {
    expect(metadata()).toBeDefined();
    expect(Object.keys(metadata() ?? {})).toHaveLength(3);
    expect(Object.values(metadata() ?? {}).map(({ index }) => index)).toEqual(
      expect.arrayContaining([0, 1, 2]),
    );
  });

  it("loads Nest's RpcParamsFactory through the deep import (not the stand-in for a missing peer)", () => {
    expect(rpcParamsFactory().constructor.name).toBe('RpcParamsFactory');
  });

  it('resolves what @Payload() wrote to the first argument (or its field) and @Ctx() to the second', () => {
    const written = metadata() ?? {};
    const factory = rpcParamsFactory();
    const args = [payload, context];
    expect(factory.exchangeKeyForValue(paramType(written, 0), undefined as unknown as string, args)).toBe(
      payload,
    );
    expect(factory.exchangeKeyForValue(paramType(written, 1), undefined as unknown as string, args)).toBe(
      context,
    );
    expect(factory.exchangeKeyForValue(paramType(written, 2), 'id', args)).toBe('order-1');
  });
});
