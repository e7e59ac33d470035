document.querySelectorAll('.question').forEach((question) => {
  question.addEventListener('click', () => {
    const item = question.parentElement;
    const open = !item.classList.contains('open');
    document.querySelectorAll('.item').forEach((other) => {
      other.classList.remove('open');
      other.querySelector('.answer').classList.add('hidden');
    });
    if (open) {
      item.classList.add('open');
      item.querySelector('.answer').classList.remove('hidden');
    }
  });
});
