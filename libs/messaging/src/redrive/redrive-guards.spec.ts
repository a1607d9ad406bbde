import { MissingAdminCredentialError } from './errors/missing-admin-credential.error';
import { RedriveBatchTooLargeError } from './errors/redrive-batch-too-large.error';
import { SameSourceAndTargetError } from './errors/same-source-and-target.error';
import { checkBatchSize, checkDistinctTarget, checkPlannedCount, requireCredential } from './redrive-guards';

describe('redrive guards', () => {
  describe(requireCredential.name, () => {
    it('refuses a missing credential, or one without principal or secret', () => {
      expect(() => requireCredential(undefined)).toThrow(MissingAdminCredentialError);
      expect(() => requireCredential({ principal: ' ', secret: 'x' })).toThrow(MissingAdminCredentialError);
      expect(() => requireCredential({ principal: 'admin', secret: '' })).toThrow(
        MissingAdminCredentialError,
      );
    });

    it('passes a complete one', () => {
      const credential = { principal: 'admin', secret: 'x' };
      expect(requireCredential(credential)).toEqual(credential);
    });

    it('passes a principal without a password where nothing checks one (Kafka without SASL, locally)', () => {
      expect(requireCredential({ principal: 'dev', secret: '' }, true)).toEqual({
        principal: 'dev',
        secret: '',
      });
      expect(() => requireCredential(undefined, true)).toThrow(MissingAdminCredentialError);
    });
  });

  describe(checkBatchSize.name, () => {
    it('allows 1 to 100 messages', () => {
      expect(() => checkBatchSize(1)).not.toThrow();
      expect(() => checkBatchSize(100)).not.toThrow();
    });

    it('refuses 101', () => {
      expect(() => checkBatchSize(101)).toThrow(RedriveBatchTooLargeError);
      expect(() => checkBatchSize(101)).toThrow(/at most 100 messages per batch; 101/);
    });

    it('rejects sizes that are not positive integers', () => {
      for (const size of [0, -1, 1.5, Number.NaN]) expect(() => checkBatchSize(size)).toThrow(RangeError);
    });
  });

  describe(checkPlannedCount.name, () => {
    it('allows an empty plan and refuses one of 101 messages', () => {
      expect(() => checkPlannedCount(0)).not.toThrow();
      expect(() => checkPlannedCount(101)).toThrow(RedriveBatchTooLargeError);
    });
  });

  describe(checkDistinctTarget.name, () => {
    it('refuses a target equal to the source', () => {
      expect(() => checkDistinctTarget('a.g.dlq', 'a.g.dlq')).toThrow(SameSourceAndTargetError);
      expect(() => checkDistinctTarget('a.g.dlq', ' a.g.dlq ')).toThrow(SameSourceAndTargetError);
      expect(() => checkDistinctTarget('a.g.dlq', 'a.g')).not.toThrow();
    });
  });
});
