#!/usr/bin/env bash
# Installs what the Slurm launcher's tests need on Debian 12 (run as root):
# munge and the Slurm daemons + client commands from Debian's own packages.
# Idempotent: packages already present are skipped.  Nothing is configured
# or started here: tests/slurm/cluster.py generates its own munge key and
# slurm.conf under a temporary directory and starts the daemons by hand.
# (On a host with systemd, the packages enable munge/slurmctld/slurmd
# services; slurmctld/slurmd fail harmlessly without /etc/slurm/slurm.conf.)
set -euo pipefail

PKGS=(
  munge            # munged + munge/unmunge: Slurm's authentication
  slurmctld        # controller daemon
  slurmd           # compute node daemon (pulls slurm-wlm-basic-plugins)
  slurm-client     # sbatch, squeue, scancel, sinfo, scontrol
)

bash "$(dirname "$0")/install-packages.sh" slurm-setup.sh "${PKGS[@]}"
echo "slurm-setup.sh: $(slurmctld -V), $(munged -V | cut -d' ' -f1) present"
