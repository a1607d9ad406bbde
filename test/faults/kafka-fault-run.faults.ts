import { faultRunSuite } from './support/fault-run-suite';

faultRunSuite('kafka');
