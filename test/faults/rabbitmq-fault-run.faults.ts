import { faultRunSuite } from './support/fault-run-suite';

faultRunSuite('rabbitmq');
