import { Admin } from 'kafkajs';
import { forwardOnly } from './forward-only';

describe(forwardOnly.name, () => {
  const admin = (offsets: Record<number, string>): Pick<Admin, 'fetchOffsets'> => ({
    fetchOffsets: async () => [
      {
        topic: 'orders.billing.dlq',
        partitions: Object.entries(offsets).map(([partition, offset]) => ({
          partition: Number(partition),
          offset,
          metadata: null,
        })),
      },
    ],
  });

  it('keeps only commits ahead of the committed offset: a late commit never moves a partition back', async () => {
    const wanted = [
      { partition: 0, offset: '5' },
      { partition: 1, offset: '5' },
      { partition: 2, offset: '5' },
      { partition: 3, offset: '1' },
    ];
    const kept = await forwardOnly(admin({ 0: '3', 1: '5', 2: '9', 3: '-1' }), 'orders.billing.dlq', wanted);
    expect(kept).toEqual([
      { partition: 0, offset: '5' },
      { partition: 3, offset: '1' },
    ]);
  });
});
