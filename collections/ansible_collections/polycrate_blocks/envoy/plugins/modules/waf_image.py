"""Documentation only: polycrate_blocks.envoy.waf_image runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: waf_image
short_description: Decide how the waf-image action builds and pushes the WAF image
description:
  - Validates C(block.config) like M(polycrate_blocks.envoy.validate), looks for the image builders on PATH
    (docker, podman, buildah) and returns the commands that build the block's C(waf/) folder (C(waf/Dockerfile))
    and push it to C(waf.image.registry/repository:tag), as decided by the pure C(envoy_block.waf_image.decide).
  - Fails once, before any command runs, on a bad config, the unpublished placeholder C(waf.image), a builder
    that is not on PATH (none at all, or not the configured C(waf.image_build.builder)), or a block copy without
    C(waf/Dockerfile).
  - Carries no credentials. With C(waf.image_build.auth) the login command reads the password on stdin and keeps
    the login in O(private_dir).
version_added: "0.20.0"
options:
  private_dir:
    description: A folder only this run can read, for the login and the pushed digest; the role removes it.
    type: path
    required: true
  push_output:
    description:
      - After the push, what it printed; the action then only returns RV(message) (the digest from the file the
        push wrote in O(private_dir), or as the push printed it, and how to pin it).
    type: str
extends_documentation_fragment:
  - polycrate_blocks.envoy.block
attributes:
  check_mode:
    support: full
    details: It only decides; the role's commands do not run in check mode.
  diff_mode:
    support: none
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Decide how to build and push the WAF image
  polycrate_blocks.envoy.waf_image:
    block: "{{ block }}"
    private_dir: "{{ __tmp.path }}"
  register: __waf_image
"""

RETURN = r"""
problems:
  description: Why the action cannot start, one line each with what to do (only on failure).
  returned: failure
  type: str
builder:
  description: The builder that runs (docker, podman or buildah).
  returned: success
  type: str
reference:
  description: Where the image goes, C(registry/repository:tag).
  returned: success
  type: str
build:
  description: The build command (argv).
  returned: success
  type: list
login:
  description: The login command (argv; the password on stdin), empty to use the builder's own login.
  returned: success
  type: list
push:
  description: The push command (argv).
  returned: success
  type: list
digest_file:
  description: Where the push writes the pushed digest; empty when the builder prints it (docker).
  returned: success
  type: str
message:
  description: With O(push_output), what was pushed and how to pin it.
  returned: with O(push_output)
  type: str
"""
