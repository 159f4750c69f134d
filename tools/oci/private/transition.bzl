"""A split transition: one configuration per platform in the rule's `platforms` attribute."""

def _per_platform_impl(_settings, attr):
    # Keyed by the platform's label, so the rule finds each branch in ctx.split_attr.
    return {
        str(platform): {"//command_line_option:platforms": [platform]}
        for platform in attr.platforms
    }

per_platform = transition(
    implementation = _per_platform_impl,
    inputs = [],
    outputs = ["//command_line_option:platforms"],
)
