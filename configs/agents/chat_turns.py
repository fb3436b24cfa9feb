"""Token helpers the MedRL agent loops share: a conversation rendered by the policy's chat template, and the tokens of a
user turn the environment adds after the policy's reply.

A turn the environment adds (a simulator's result, an opponent's verdict) is the chat template's text for that user
message, found as the difference between the conversation rendered with and without it (exact for ChatML and Llama 3).
A template that renders earlier turns differently once a user turn follows (Qwen3 drops an earlier reply's <think>
block) gets what verl's own tool agent loop adds: the message rendered alone, less the template's default system prompt.
"""


def render(tokenizer, messages, generation_prompt, template_kwargs=None):
    return tokenizer.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=False,
                                         **(template_kwargs or {}))


def encode(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False)


def prompt_ids(tokenizer, messages, template_kwargs=None):
    """The conversation's tokens up to and including the assistant's header, as verl's agent loops build a prompt."""
    return encode(tokenizer, render(tokenizer, messages, True, template_kwargs))


def user_turn_ids(tokenizer, messages, content, generated, template_kwargs=None, policy_next=True):
    """The tokens the template puts after the policy's reply (`generated`, the last of `messages`) for a new user message
    `content`, with the next assistant header when the policy answers it (`policy_next`; a turn that ends the episode has
    none): the rendered text from the end of the reply on, less the end-of-turn token the policy already generated."""
    before = render(tokenizer, messages, False, template_kwargs)
    after = render(tokenizer, messages + [{"role": "user", "content": content}], policy_next, template_kwargs)
    reply = messages[-1]["content"]
    end = before.rfind(reply)
    if not after.startswith(before) or end < 0:
        return encode(tokenizer, lone_turn(tokenizer, content, policy_next, template_kwargs))
    tail = before[end + len(reply):] + after[len(before):]
    last = tokenizer.convert_ids_to_tokens(generated[-1]) if generated else None
    if last in tokenizer.all_special_tokens and tail.startswith(last):
        tail = tail[len(last):]
    return encode(tokenizer, tail)


def lone_turn(tokenizer, content, policy_next, template_kwargs=None):
    """A user message as the template renders it alone, without the system prompt some templates add by default (how
    verl's initialize_system_prompt finds it: one empty user turn rendered, less what a second one adds)."""
    one = render(tokenizer, [{"role": "user", "content": ""}], False, template_kwargs)
    two = render(tokenizer, [{"role": "user", "content": ""}] * 2, False, template_kwargs)
    prefix = one[: len(one) - (len(two) - len(one))]
    text = render(tokenizer, [{"role": "user", "content": content}], policy_next, template_kwargs)
    return text[len(prefix):] if text.startswith(prefix) else text
