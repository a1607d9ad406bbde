import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';

/** A method of a provider or controller instance, as found at startup. */
export interface DiscoveredMethod {
  readonly wrapper: InstanceWrapper;
  readonly instance: Record<string, (...args: unknown[]) => unknown>;
  readonly name: string;
  /** The method on the prototype, where decorators put their metadata. */
  readonly method: (...args: unknown[]) => unknown;
}

/** Every method of every provider and controller instance: what both explorers look through. */
@Injectable()
export class DecoratedMethods {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  *all(): Generator<DiscoveredMethod> {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const instance = wrapper.instance as DiscoveredMethod['instance'] | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance) as DiscoveredMethod['instance'];
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        yield { wrapper, instance, name, method: prototype[name] };
      }
    }
  }
}
