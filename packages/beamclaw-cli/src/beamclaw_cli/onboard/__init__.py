"""``beamclaw onboard``'s parts: presets, key files, TOML edits, persona, test call.

Each module is one concept and pure where it can be; :mod:`beamclaw_cli.onboard.setup`
applies the choices, :mod:`beamclaw_cli.commands.onboard` asks for them.
"""
