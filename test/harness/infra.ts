export { infraEnv, type InfraEnv } from '../../tools/infra/env';
