import { Injectable } from '@nestjs/common';
import { EventDefinition } from '../envelope/event-definition';
import { InboxWriters } from '../inbox/inbox-writers';
import { ResolvedRetryPolicy } from '../retry/retry-policy.interface';
import { MessageContext } from './message-context';

/** One discovered `@IdempotentHandler()`. */
export interface HandlerDefinition {
  readonly group: string;
  readonly event: EventDefinition<string, unknown>;
  /** The handler's `@RetryPolicy()`, else the destination's default; undefined: no automatic retry. */
  readonly policy?: ResolvedRetryPolicy;
  /** `Class.method`, for logs and errors. */
  readonly name: string;
  /** Calls the method through Nest (guards, interceptors, pipes and param decorators apply). */
  readonly invoke: (payload: unknown, context: MessageContext) => Promise<unknown>;
}

/** The handlers of the application, by consumer group, destination and event type. */
@Injectable()
export class HandlerRegistry implements InboxWriters {
  private readonly groups = new Map<string, Map<string, Map<string, HandlerDefinition>>>();

  /** Adds a handler; returns the one already registered for the same group and event type, if any. */
  add(handler: HandlerDefinition): HandlerDefinition | undefined {
    const destinations = this.groups.get(handler.group) ?? new Map<string, Map<string, HandlerDefinition>>();
    this.groups.set(handler.group, destinations);
    const types = destinations.get(handler.event.destination) ?? new Map<string, HandlerDefinition>();
    destinations.set(handler.event.destination, types);
    const existing = types.get(handler.event.type);
    if (!existing) types.set(handler.event.type, handler);
    return existing;
  }

  /** The handler for a message, or undefined when the group does not know the type there. */
  find(group: string, destination: string, type: string): HandlerDefinition | undefined {
    return this.groups.get(group)?.get(destination)?.get(type);
  }

  groupNames(): string[] {
    return [...this.groups.keys()];
  }

  /** Destinations a group consumes, each with its handlers. */
  destinationsOf(group: string): Map<string, Map<string, HandlerDefinition>> {
    return this.groups.get(group) ?? new Map<string, Map<string, HandlerDefinition>>();
  }

  get size(): number {
    let count = 0;
    this.groups.forEach((destinations) => destinations.forEach((types) => (count += types.size)));
    return count;
  }
}
