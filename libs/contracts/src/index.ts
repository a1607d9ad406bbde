/** Events the demo services exchange: both import them from here, neither from the other. */
export * from './post-created.event';
