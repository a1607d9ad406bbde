import { WireMessage } from '../envelope/wire-message';
import { MessageTransport, PublishOptions } from '../transports/message-transport.interface';
import { stampTenant } from '../envelope/tenant-signature';

/**
 * The transport as one tenant's relay sees it: every message it publishes carries that tenant, signed. The
 * tenant comes from the database the relay read the row from, never from the row: a row cannot claim another
 * tenant.
 */
export function tenantTransport(transport: MessageTransport, tenant: string, key: Buffer): MessageTransport {
  return {
    kind: transport.kind,
    get capabilities() {
      return transport.capabilities;
    },
    publish: (messages: readonly WireMessage[], options?: PublishOptions) =>
      transport.publish(
        messages.map((message) => stampTenant(key, tenant, message)),
        options,
      ),
    publishCopies: (copies) => transport.publishCopies(copies),
    subscribe: (subscription) => transport.subscribe(subscription),
    ensureDestinations: (destinations) => transport.ensureDestinations(destinations),
    declareTopology: (topology) => transport.declareTopology(topology),
    missingTopology: (topology) => transport.missingTopology(topology),
    health: () => transport.health(),
    checkHealth: () => transport.checkHealth(),
    // The service's transport is closed once, by the module: never by a tenant.
    close: () => Promise.resolve(),
  };
}
