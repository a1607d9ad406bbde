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

  it("sends kafkajs's idempotent-producer retries warning to debug: the library limits them on purpose", () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
    log(logLevel.WARN, 'Limiting retries for the idempotent producer may invalidate EoS guarantees');
    expect(warn).not.toHaveBeenCalled();
    expect(debug).toHaveBeenCalledTimes(1);
  });

  it('keeps every other warning a warning', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log(logLevel.WARN, 'The group is rebalancing, re-joining');
    expect(warn).toHaveBeenCalledWith('The group is rebalancing, re-joining');
  });
});
