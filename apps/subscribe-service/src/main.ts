import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { configureHttp, explainStartupFailure } from '@app/service-kit';
import { AppModule } from './app.module';
import { loadSubscribeServiceConfig } from './config/app.config';

async function bootstrap(): Promise<void> {
  const config = loadSubscribeServiceConfig();
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    abortOnError: false,
  });
  configureHttp(app);
  app.enableShutdownHooks();
  await app.listen(config.port, config.host ?? '0.0.0.0');
  new Logger('subscribe-service').log(
    `Listening on port ${config.port}, consuming over ${config.transport.kind} (pid ${process.pid}).`,
  );
}

bootstrap().catch((error: unknown) => {
  console.error(explainStartupFailure('subscribe-service', error));
  process.exit(1);
});
