// The cluster classes live in tools/infra (the demo's --cluster runs them too).
export { CLUSTER_REPLICATION, KafkaCluster } from '../../tools/infra/kafka-cluster';
