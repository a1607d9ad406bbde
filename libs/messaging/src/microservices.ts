/**
 * The library's consumers as a Nest microservice (`app.connectMicroservice({ strategy })`). Needs
 * `@nestjs/microservices`, an optional peer dependency.
 *
 * @packageDocumentation
 */
export { MessagingServer } from './consumers/messaging.server';
