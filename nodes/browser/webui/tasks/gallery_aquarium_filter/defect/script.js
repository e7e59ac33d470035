document.querySelectorAll('.filter').forEach((button) => {
  button.addEventListener('click', () => {
    document.querySelectorAll('.filter').forEach((b) => b.classList.toggle('active', b === button));
    let shown = 0;
    const items = document.querySelectorAll('.item');
    items.forEach((item) => {
      const keep = button.dataset.show === 'all' || item.dataset.kind === button.dataset.show;
      item.classList.toggle('gone', !keep);
      shown += keep ? 1 : 0;
    });
    document.getElementById('count').textContent = 'Showing ' + shown + ' of ' + items.length;
  });
});
