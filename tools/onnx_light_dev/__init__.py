"""Library code behind the tools/ entry points (kernel inventory, exemptions, gate)."""
