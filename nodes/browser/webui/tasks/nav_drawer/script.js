const drawer = document.getElementById('drawer');
document.getElementById('burger').addEventListener('click', () => drawer.classList.toggle('closed'));
document.querySelectorAll('.entry').forEach((entry) => {
  entry.addEventListener('click', (event) => {
    event.preventDefault();
    document.getElementById('page-title').textContent = entry.dataset.page;
    drawer.classList.add('closed');
  });
});
