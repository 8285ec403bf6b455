#!/bin/sh
# Makes the compose file's secrets in ./secrets, readable by their owner only:
# payd's secrets key (64 hex characters), the database password, and the pgpass
# line payd reads it from. An existing secrets key is never replaced: the
# database's sealed data needs the key it was sealed with.
set -eu
cd "$(dirname "$0")"
umask 077
mkdir -p secrets
[ -s secrets/payd_secrets_key ] || od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > secrets/payd_secrets_key
[ -s secrets/postgres_password ] || od -An -tx1 -N24 /dev/urandom | tr -d ' \n' > secrets/postgres_password
printf 'postgres:5432:payd:payd:%s\n' "$(cat secrets/postgres_password)" > secrets/pgpass
chmod 600 secrets/payd_secrets_key secrets/postgres_password secrets/pgpass
echo "secrets written to $(pwd)/secrets"
