import { blogScenarioSuite } from './support/blog-suite';

blogScenarioSuite('kafka');
