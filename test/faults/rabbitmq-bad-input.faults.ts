import { badInputSuite } from './support/bad-input-suite';

badInputSuite('rabbitmq');
