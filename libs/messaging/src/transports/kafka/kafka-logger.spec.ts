import { Logger } from '@nestjs/common';
import { logLevel } from 'kafkajs';
import { kafkaLogCreator } from './kafka-logger';

describe(kafkaLogCreator.name, () => {
  afterEach(() => jest.restoreAllMocks());

  const log = (level: logLevel, message: string) =>
    kafkaLogCreator('kafkajs')(logLevel.DEBUG)({
      namespace: 'Producer',
      level,
      label: 'WARN',
      log: { message, timestamp: '' },
    });

  it("drops kafkajs's idempotent-producer retries warning (EoS): the library limits them on purpose (issue 37, 6)", () => {
    const spies = (['log', 'warn', 'debug', 'verbose', 'error'] as const).map((level) =>
      jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined),
    );
    log(logLevel.WARN, 'Limiting retries for the idempotent producer may invalidate EoS guarantees');
    spies.forEach((spy) => expect(spy).not.toHaveBeenCalled());
  });

  it('keeps every other warning a warning', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log(logLevel.WARN, 'The group is rebalancing, re-joining');
    expect(warn).toHaveBeenCalledWith('The group is rebalancing, re-joining');
  });
});
