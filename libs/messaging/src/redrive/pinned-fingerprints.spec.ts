import { ApproverKeyring } from './approvals/approver-keyring';
import { KeyringNotPinnedError } from './errors/keyring-not-pinned.error';
import { TopologyNotPinnedError } from './errors/topology-not-pinned.error';
import { RedriveLedger } from './ledger/redrive-ledger.interface';
import { checkPinnedKeyring, checkPinnedTopology, topologyFingerprint } from './pinned-fingerprints';

const reviewed = {
  destinations: ['shop.orders'],
  groups: [{ group: 'billing', destination: 'shop.orders', retryTiersMs: [] }],
};

/** A ledger that pins `keyring` and `topology` (undefined: nothing pinned). */
const pinning = (pins: { keyring?: string; topology?: string }) =>
  ({
    pinnedKeyring: async () => pins.keyring,
    pinnedTopology: async () => pins.topology,
  }) as unknown as RedriveLedger;

describe('pinned fingerprints', () => {
  describe(topologyFingerprint.name, () => {
    it('is the same for the file and the object with its defaults, whatever the key order', () => {
      const fromFile = topologyFingerprint({
        groups: [{ destination: 'shop.orders', group: 'billing' } as never],
        destinations: ['shop.orders'],
      });
      expect(fromFile).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(topologyFingerprint(reviewed)).toBe(fromFile);
    });

    it('changes with any edit: another reading of an ambiguous name, a group added', () => {
      const base = topologyFingerprint(reviewed);
      const reread = {
        destinations: ['shop'],
        groups: [{ group: 'orders.billing', destination: 'shop', retryTiersMs: [] }],
      };
      const added = {
        ...reviewed,
        groups: [...reviewed.groups, { group: 'audit', destination: 'shop.orders', retryTiersMs: [] }],
      };
      expect(topologyFingerprint(reread)).not.toBe(base);
      expect(topologyFingerprint(added)).not.toBe(base);
    });
  });

  describe(checkPinnedTopology.name, () => {
    it('refuses another topology, or none, once one is pinned; passes the pinned one (issue 45, finding 14)', async () => {
      const ledger = pinning({ topology: topologyFingerprint(reviewed) });
      await expect(checkPinnedTopology(ledger, reviewed)).resolves.toBeUndefined();
      const edited = { ...reviewed, destinations: ['shop.orders', 'shop'] };
      await expect(checkPinnedTopology(ledger, edited)).rejects.toThrow(TopologyNotPinnedError);
      await expect(checkPinnedTopology(ledger, undefined)).rejects.toThrow(/topology in use \(none\)/);
    });

    it('passes anything while nothing is pinned, or the ledger cannot pin', async () => {
      await expect(checkPinnedTopology(pinning({}), undefined)).resolves.toBeUndefined();
      await expect(checkPinnedTopology({} as RedriveLedger, reviewed)).resolves.toBeUndefined();
    });
  });

  describe(checkPinnedKeyring.name, () => {
    it('applies the same rule to the keyring', async () => {
      const keyring = ApproverKeyring.empty();
      await expect(
        checkPinnedKeyring(pinning({ keyring: keyring.fingerprint }), keyring),
      ).resolves.toBeUndefined();
      await expect(checkPinnedKeyring(pinning({ keyring: 'sha256:other' }), keyring)).rejects.toThrow(
        KeyringNotPinnedError,
      );
    });
  });
});
