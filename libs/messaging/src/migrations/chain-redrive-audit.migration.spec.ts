import type { QueryRunner } from 'typeorm';
import { AUDIT_CHAIN_GENESIS } from '../redrive/ledger/audit-chain';
import { ChainRedriveAudit1764979200000 } from './chain-redrive-audit.migration';

describe(ChainRedriveAudit1764979200000.name, () => {
  describe('up', () => {
    it('chains the first entry to the genesis hash the ledger verifies against', async () => {
      const statements: string[] = [];
      const queryRunner = {
        connection: { options: { schema: 'audit_spec' } },
        query: (sql: string) => {
          statements.push(sql);
          return Promise.resolve(sql.includes('current_schema()') ? [{ schema: 'public' }] : []);
        },
      } as unknown as QueryRunner;

      await new ChainRedriveAudit1764979200000().up(queryRunner);

      expect(statements.some((sql) => sql.includes(`'${AUDIT_CHAIN_GENESIS}'`))).toBe(true);
    });
  });
});
