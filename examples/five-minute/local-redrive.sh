# In the app's folder, with the broker the app uses (AMQP_URL or KAFKA_BROKERS, as for `npm run start`).
createdb -h 127.0.0.1 -U postgres messaging_admin
export MESSAGING_ADMIN_DATABASE_URL=postgres://postgres@127.0.0.1:5432/messaging_admin
npx nest-messaging db migrate                      # the audit log, used approvals, exclusive holds
npx nest-messaging approver keygen --name jane     # writes jane.approver-key.json, prints jane's keyring entry
# The keyring (version 2): the entry keygen printed, and you as the planner and executor under the account
# the CLI acts as (RabbitMQ locally: the user in AMQP_URL, else guest; Kafka without SASL: `whoami`).
cat > approvers.json <<'EOF'
{ "version": 2, "people": [ <jane's entry>, { "name": "me", "accounts": ["<your account>"] } ] }
EOF
export MESSAGING_ADMIN_APPROVERS=$PWD/approvers.json   # the path to the keyring file, not its content
export MESSAGING_KEY_SECRET=…                          # the services' key secret (restores real keys)
npx nest-messaging dlq plan --source orders.billing.dlq --out plan.json --local-plaintext
npx nest-messaging dlq approve --plan plan.json --key jane.approver-key.json --local-plaintext
npx nest-messaging dlq redrive --plan plan.json --approval plan.approval.json --local-plaintext
npx nest-messaging dlq history --source orders.billing.dlq --local-plaintext
