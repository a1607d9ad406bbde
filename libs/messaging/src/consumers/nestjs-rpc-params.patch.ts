import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import type { ParamsFactory } from '@nestjs/core/helpers/external-context-creator';

/**
 * The metadata key `@Payload()` and `@Ctx()` of `@nestjs/microservices` write a handler's parameters under
 * (its `PARAM_ARGS_METADATA`, which is `@nestjs/common`'s `ROUTE_ARGS_METADATA`; neither is in a public entry
 * point).
 */
export const RPC_ARGS_METADATA: string = ROUTE_ARGS_METADATA;

type RpcParamsFactoryModule = { RpcParamsFactory: new () => ParamsFactory };

/** Without @nestjs/microservices there are no `@Payload()`/`@Ctx()` decorators to resolve. */
const NO_PARAMS: ParamsFactory = { exchangeKeyForValue: () => null };

/**
 * Nest's own factory that resolves `@Payload()` and `@Ctx()` from a handler's arguments, so that an
 * `@IdempotentHandler()` takes them as a `@MessagePattern()` handler does; `NO_PARAMS` when the optional
 * peer `@nestjs/microservices` is not installed. A deep import (`factories/rpc-params-factory`, not in the
 * package's public entry): `nestjs-rpc-params.contract.spec.ts` checks it against the installed version.
 */
export function rpcParamsFactory(): ParamsFactory {
  try {
    // A variable, so that bundlers and the type checker leave the optional peer alone.
    const factoryPath = '@nestjs/microservices/factories/rpc-params-factory';
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, used when present
    const { RpcParamsFactory } = require(factoryPath) as RpcParamsFactoryModule;
    return new RpcParamsFactory();
  } catch (error) {
    if ((error as { code?: unknown }).code === 'MODULE_NOT_FOUND') return NO_PARAMS;
    throw error;
  }
}
