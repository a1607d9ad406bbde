export * from './explain-startup-failure';
