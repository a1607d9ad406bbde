// The cluster classes live in tools/infra (the demo's --cluster runs them too).
export { RabbitCluster } from '../../tools/infra/rabbitmq-cluster';
